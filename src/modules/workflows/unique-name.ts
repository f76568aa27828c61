/**
 * PySpur's uniqueness rule for create and duplicate: a taken name gets the server's local time
 * appended, `"<name> YYYY-MM-DD HH:MM:SS"`. Where PySpur fails on a second clash in the same second,
 * we append a counter instead: `"<name> YYYY-MM-DD HH:MM:SS (2)"`.
 */
export function timestampSuffixedName(name: string, now: Date): string {
  const p = (n: number) => String(n).padStart(2, '0');
  const date = `${now.getFullYear()}-${p(now.getMonth() + 1)}-${p(now.getDate())}`;
  const time = `${p(now.getHours())}:${p(now.getMinutes())}:${p(now.getSeconds())}`;
  return `${name} ${date} ${time}`;
}

export function* candidateNames(name: string, now: Date): Generator<string> {
  yield name;
  const stamped = timestampSuffixedName(name, now);
  yield stamped;
  for (let n = 2; ; n++) yield `${stamped} (${n})`;
}
