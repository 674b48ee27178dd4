-- Headless Neovim (0.7+) as a real LSP client of `onnx-lint server`:
-- open a binary model, wait for onnx-lint's diagnostics, apply the quick fix
-- the server offers, wait for the diagnostics to clear. Writes what it saw as
-- JSON to $ONNX_LINT_RESULT. Environment: ONNX_LINT_PYTHON, ONNX_LINT_MODEL.
local python = os.getenv("ONNX_LINT_PYTHON")
local model = os.getenv("ONNX_LINT_MODEL")
local result_path = os.getenv("ONNX_LINT_RESULT")
local result = { steps = {} }

local function finish()
  local f = io.open(result_path, "w")
  f:write(vim.fn.json_encode(result))
  f:close()
  vim.cmd("qall!")
end

local function step(name) table.insert(result.steps, name) end

local client_id = vim.lsp.start_client({
  name = "onnx-lint",
  cmd = { python, "-m", "onnx_lint", "server" },
  root_dir = vim.fn.fnamemodify(model, ":h"),
  on_exit = function(code) result.exit_code = code end,
})
if not client_id then
  result.error = "start_client failed"
  finish()
end

vim.cmd("edit " .. vim.fn.fnameescape(model))
local bufnr = vim.api.nvim_get_current_buf()
vim.lsp.buf_attach_client(bufnr, client_id)
step("opened")

local ok = vim.wait(90000, function() return #vim.diagnostic.get(bufnr) > 0 end, 100)
if not ok then
  result.error = "no diagnostics published"
  finish()
end
result.before = {}
for _, d in ipairs(vim.diagnostic.get(bufnr)) do
  table.insert(result.before, { code = d.user_data and d.user_data.lsp and d.user_data.lsp.code or d.code,
                                 message = d.message, severity = d.severity, lnum = d.lnum, source = d.source })
end
step("diagnostics")

local client = vim.lsp.get_client_by_id(client_id)
local lsp_diagnostics = vim.lsp.diagnostic.get_line_diagnostics(bufnr, 0)
local params = {
  textDocument = { uri = vim.uri_from_bufnr(bufnr) },
  range = { start = { line = 0, character = 0 }, ["end"] = { line = 0, character = 0 } },
  context = { diagnostics = lsp_diagnostics, only = { "quickfix" } },
}
local response = client.request_sync("textDocument/codeAction", params, 60000, bufnr)
if not response or response.err or not response.result or #response.result == 0 then
  result.error = "no code actions: " .. vim.inspect(response)
  finish()
end
result.actions = {}
for _, action in ipairs(response.result) do table.insert(result.actions, action.title) end
local action = response.result[1]
local executed = client.request_sync("workspace/executeCommand", action.command, 120000, bufnr)
result.fix = executed and executed.result or vim.inspect(executed)
step("fixed")

ok = vim.wait(90000, function() return #vim.diagnostic.get(bufnr) == 0 end, 100)
result.after = #vim.diagnostic.get(bufnr)
if ok then step("cleared") end
vim.lsp.stop_client(client_id)
vim.wait(10000, function() return result.exit_code ~= nil end, 100)
finish()
