// Pure logic (no `vscode` import): the server's hover, without what VS Code's own hover already shows.

/**
 * VS Code puts a diagnostic's message in the hover of its range itself; the server's hover (written
 * for every editor) starts each finding with `**CODE** message`. Drop the message where VS Code shows it,
 * keep the code, the explanation and the docs link: the message reads once.
 */
export function withoutShownMessages(markdown: string, shown: readonly string[]): string {
  let text = markdown;
  for (const message of shown) {
    text = text.replace(new RegExp(`(\\*\\*OL\\d+\\*\\*) ${message.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}(\\n|$)`), "$1$2");
  }
  return text;
}
