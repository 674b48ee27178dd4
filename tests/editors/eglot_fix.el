;;; eglot_fix.el --- Emacs eglot in --batch as a real LSP client of `onnx-lint server'  -*- lexical-binding: t -*-
;; Open a binary model (read as latin-1, as FIELD-NOTES says), wait for the
;; diagnostics eglot hands to Flymake, run the quick fix the server offers,
;; wait for the diagnostics to clear.  Writes what it saw as JSON to
;; $ONNX_LINT_RESULT.  Environment: ONNX_LINT_PYTHON, ONNX_LINT_MODEL.
;; Debian installs eglot (and the newer project, xref, seq it needs) as ELPA packages.
(require 'package)
(add-to-list 'package-directory-list "/usr/share/emacs/site-lisp/elpa")
(package-initialize)
(require 'eglot)
(require 'json)

(defvar onnx-lint-result (list (cons 'steps [])))
(defun onnx-lint-step (name)
  (setf (alist-get 'steps onnx-lint-result) (vconcat (alist-get 'steps onnx-lint-result) (list name))))
(defun onnx-lint-finish ()
  (with-temp-file (getenv "ONNX_LINT_RESULT") (insert (json-encode onnx-lint-result)))
  (kill-emacs 0))
(defun onnx-lint-wait (predicate seconds)
  (let ((deadline (+ (float-time) seconds)))
    (while (and (not (funcall predicate)) (< (float-time) deadline))
      (accept-process-output nil 0.1))
    (funcall predicate)))

(define-derived-mode onnx-model-mode fundamental-mode "ONNX" "Binary ONNX models.")
(setq eglot-server-programs `((onnx-model-mode . (,(getenv "ONNX_LINT_PYTHON") "-m" "onnx_lint" "server"))))
(setq eglot-sync-connect 60 eglot-connect-timeout 90)

;; Diagnostics as eglot receives them (Flymake shows the same list to a user).
(defvar onnx-lint-published nil)
(advice-add 'eglot-handle-notification :before
            (lambda (_server method &rest params)
              (when (eq method 'textDocument/publishDiagnostics)
                (setq onnx-lint-published (cons (plist-get params :diagnostics) onnx-lint-published)))))

(condition-case err
    (progn
      (let ((coding-system-for-read 'latin-1))
        (find-file (getenv "ONNX_LINT_MODEL")))
      (onnx-model-mode)
      (apply #'eglot (eglot--guess-contact))
      (onnx-lint-step "connected")
      (unless (onnx-lint-wait (lambda () (and onnx-lint-published (> (length (car onnx-lint-published)) 0))) 90)
        (error "no diagnostics published"))
      (onnx-lint-step "diagnostics")
      (onnx-lint-wait (lambda () (flymake-diagnostics)) 10)
      (setf (alist-get 'flymake onnx-lint-result)
            (vconcat (mapcar #'flymake-diagnostic-text (flymake-diagnostics))))
      (let* ((server (eglot-current-server))
             (diagnostics (car onnx-lint-published))
             (actions (jsonrpc-request server :textDocument/codeAction
                                       (list :textDocument (eglot--TextDocumentIdentifier)
                                             :range (list :start (list :line 0 :character 0)
                                                          :end (list :line 0 :character 0))
                                             :context (list :diagnostics diagnostics :only ["quickfix"]))))
             (action (aref actions 0))
             (command (plist-get action :command)))
        (setf (alist-get 'actions onnx-lint-result) (vconcat (mapcar (lambda (a) (plist-get a :title)) actions)))
        (setf (alist-get 'fix onnx-lint-result)
              (eglot-execute-command server (intern (plist-get command :command)) (plist-get command :arguments)))
        (onnx-lint-step "fixed")
        (when (onnx-lint-wait (lambda () (equal (car onnx-lint-published) [])) 90)
          (onnx-lint-step "cleared")))
      (eglot-shutdown (eglot-current-server))
      (onnx-lint-step "shutdown"))
  (error (setf (alist-get 'error onnx-lint-result) (error-message-string err))))
(onnx-lint-finish)
