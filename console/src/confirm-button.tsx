import { useEffect, useRef, useState } from 'preact/hooks';

/**
 * A destructive action asked twice: the first button only asks, the second does it. Focus moves to
 * the "yes" so a keyboard user answers the question where it appears, and back when they keep it.
 */
export function ConfirmButton({
  label,
  question,
  confirmLabel,
  disabled,
  onConfirm,
}: {
  label: string;
  question: string;
  confirmLabel: string;
  disabled: boolean;
  onConfirm: () => void;
}) {
  const [asking, setAsking] = useState(false);
  const answered = useRef(false);
  const ask = useRef<HTMLButtonElement>(null);
  const yes = useRef<HTMLButtonElement>(null);
  useEffect(() => {
    if (asking) yes.current?.focus();
    else if (answered.current) ask.current?.focus();
  }, [asking]);
  const close = () => {
    answered.current = true;
    setAsking(false);
  };

  if (!asking)
    return (
      <button type="button" ref={ask} disabled={disabled} onClick={() => setAsking(true)}>
        {label}
      </button>
    );
  return (
    <span class="confirm" role="group" aria-label={question}>
      <span>{question}</span>
      <button
        type="button"
        ref={yes}
        disabled={disabled}
        onClick={() => {
          close();
          onConfirm();
        }}
      >
        {confirmLabel}
      </button>
      <button type="button" onClick={close}>
        Cancel
      </button>
    </span>
  );
}
