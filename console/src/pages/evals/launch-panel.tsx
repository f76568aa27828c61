import { Status } from '../../loading';
import { CompareForm } from './compare-form';
import type { Suite } from './eval-types';
import { LaunchEvalForm } from './launch-eval-form';
import { useWorkflows } from './workflow-choices';

/** The two forms that start work (for roles holding `build`): an eval run, a comparison. */
export function LaunchPanel({ suites }: { suites: Suite[] }) {
  const { workflows, error } = useWorkflows();
  if (!workflows) return <Status error={error} loading />;
  return (
    <div class="eval-forms">
      <LaunchEvalForm suites={suites} workflows={workflows} />
      <CompareForm suites={suites} workflows={workflows} />
    </div>
  );
}
