import { z } from 'zod';
import { fixedOutputConfig } from '../base-config.js';
import { openObject } from '../shared-models.js';
import type { NodeTypeDefinition } from '../types.js';

const output = z.object({ transcript: z.string() });

const config = fixedOutputConfig(output, {
  video_url_template: z.string().default(''),
});

/** Fetches the transcript of a YouTube video. */
export const youTubeTranscriptNode: NodeTypeDefinition<typeof config> = {
  name: 'YouTubeTranscriptNode',
  displayName: 'YouTubeTranscript',
  category: 'Integrations',
  visualTag: { acronym: 'YTN', color: '#DC3545' },
  config,
  input: openObject(),
  output,
  logo: '/images/youtube.png',
  categoryLabel: 'YouTube',
  executionKind: 'io',
};
