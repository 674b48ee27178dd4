// The whole-graph view's layout worker: dagre off the page's thread, so panning, typing and the rest
// of the view stay responsive while a big graph is laid out. One message in, one message out.
import { layoutVisible } from "../graphLayout";
import { Visible } from "../wholeGraph";

self.onmessage = (event: MessageEvent<{ id: number; visible: Visible }>) => {
  const started = performance.now();
  try {
    const laidOut = layoutVisible(event.data.visible);
    self.postMessage({ id: event.data.id, laidOut, ms: performance.now() - started });
  } catch (error) {
    self.postMessage({ id: event.data.id, error: String(error) });
  }
};
