/** A table's caption of how many rows it lists: "No keys", "1 key", "3 keys". */
export function countOf(n: number, noun: string): string {
  if (n === 0) return `No ${noun}s`;
  return n === 1 ? `1 ${noun}` : `${n} ${noun}s`;
}
