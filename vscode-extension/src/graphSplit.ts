// Pure logic (no `vscode`, no DOM) of the split between the whole graph's drawing and its details: the
// drawing's share, in percent of the width (of the height in a narrow column), and where a key moves it.

export const GRAPH_SHARE = { min: 20, max: 85, initial: 62, step: 5 };

export function clampShare(share: number): number {
  return Math.min(GRAPH_SHARE.max, Math.max(GRAPH_SHARE.min, share));
}

/** Where a key moves the split, as the window splitter pattern has it (arrows step, Home and End go to the
 * limits); undefined for any other key. Left and Up give the drawing less room, Right and Down more. */
export function shareAfterKey(key: string, share: number): number | undefined {
  const to = ({
    ArrowLeft: share - GRAPH_SHARE.step, ArrowUp: share - GRAPH_SHARE.step,
    ArrowRight: share + GRAPH_SHARE.step, ArrowDown: share + GRAPH_SHARE.step,
    Home: GRAPH_SHARE.min, End: GRAPH_SHARE.max,
  } as Record<string, number>)[key];
  return to === undefined ? undefined : clampShare(to);
}
