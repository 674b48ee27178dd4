import * as vscode from "vscode";
import {
  LanguageClient, WorkDoneProgress, WorkDoneProgressBegin, WorkDoneProgressCancelNotification,
  WorkDoneProgressCreateRequest, WorkDoneProgressReport,
} from "vscode-languageclient/node";

/**
 * The server's work-done progress (quantize: steps, calibration samples) as a notification with Cancel.
 * vscode-languageclient shows server-created progress in the status bar only, where a long quantize
 * looked like nothing was happening; this handler replaces its own (the last one registered answers).
 */
export function progressInNotifications(client: LanguageClient): vscode.Disposable {
  return client.onRequest(WorkDoneProgressCreateRequest.type, ({ token }) => {
    let finish: () => void = () => undefined;
    const finished = new Promise<void>((resolve) => { finish = resolve; });
    let report: ((value: WorkDoneProgressBegin | WorkDoneProgressReport) => void) | undefined;
    const listening = client.onProgress(WorkDoneProgress.type, token, (value) => {
      if (value.kind === "begin") {
        void vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title: value.title,
          cancellable: Boolean(value.cancellable) }, (progress, cancel) => {
          cancel.onCancellationRequested(() => void client.sendNotification(WorkDoneProgressCancelNotification.type, { token }));
          let shown = 0;
          report = (next) => {
            const percentage = next.percentage ?? shown;
            progress.report({ message: next.message, increment: Math.max(0, percentage - shown) });
            shown = Math.max(shown, percentage);
          };
          report(value);
          return finished;
        });
      } else if (value.kind === "report") {
        report?.(value);
      } else {
        finish();
        listening.dispose();
      }
    });
  });
}
