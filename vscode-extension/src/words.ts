// Pure wording shared by the host's HTML and the page's script (no `vscode`, no DOM): counts said with the
// right singular or plural, and what the search says when it stops listing matches.

/** "25,000": a whole number as toLocaleString("en") writes it, without asking Intl: a page's first toLocaleString
 * sets up ICU's number formatting (20 ms and more), in the middle of opening a 100k-node graph. */
export function thousands(n: number): string {
  return Number.isSafeInteger(n) && !Object.is(n, -0) ? String(n).replace(/\B(?=(\d{3})+$)/g, ",")
    : n.toLocaleString("en");
}

/** "1 node", "2 nodes", "25,000 matches". */
export function count(n: number, singular: string, plural = `${singular}s`): string {
  return `${thousands(n)} ${n === 1 ? singular : plural}`;
}

/** The most matches the search lists: more would be a list nobody reads (the user refines the query). */
export const SEARCH_SHOWN = 50;

/** What the search says under its box: every match when all are listed, else how many of how many. */
export function searchSummary(shown: number, total: number): string {
  if (total === 0) {
    return "No node or tensor matches";
  }
  return shown < total ? `${thousands(shown)} of ${count(total, "match", "matches")} shown`
    : count(total, "match", "matches");
}
