/* cordon mcp's tools: name, description, input and output JSON Schemas
 * (mcp-tools.c lists them in tools/list; the structured content each tool
 * returns is checked against its output schema by clients such as the
 * TypeScript SDK's). */
#pragma once

#define S_POLICY "\"policy\":{\"type\":\"object\",\"description\":\"A cordon policy (docs/policy.md), as --policy takes it: filesystem, network, env, limits... Without it, the server's (cordon mcp --policy).\"}"
#define S_TIMEOUT(what) "{\"type\":\"string\",\"description\":\"" what " wall-clock limit, e.g. \\\"30s\\\", \\\"5m\\\"\"}"
#define S_CMD                                                                                                        \
	"\"command\":{\"type\":\"string\",\"description\":\"A shell command line, run by /bin/sh -c\"},"             \
	"\"argv\":{\"type\":\"array\",\"items\":{\"type\":\"string\"},\"minItems\":1,\"description\":\"The program and its arguments, run without a shell (give command or argv)\"}," \
	"\"stdin\":{\"type\":\"string\",\"description\":\"Text given as standard input (else /dev/null)\"},"
#define S_EXEC_OUT                                                                                                   \
	"\"status\":{\"type\":\"string\",\"description\":\"ok, exit-nonzero, signaled, timeout, output-limit, start-error, session-ended\"}," \
	"\"exit_code\":{\"type\":[\"integer\",\"null\"]},\"signal\":{\"type\":[\"string\",\"null\"]},"                \
	"\"error\":{\"type\":\"string\"},"                                                                          \
	"\"stdout\":{\"type\":\"string\"},\"stderr\":{\"type\":\"string\"},"                                       \
	"\"stdout_bytes\":{\"type\":\"integer\"},\"stderr_bytes\":{\"type\":\"integer\"},"                         \
	"\"stdout_truncated\":{\"type\":\"boolean\"},\"stderr_truncated\":{\"type\":\"boolean\"},"                 \
	"\"denials\":{\"type\":\"array\",\"items\":{\"type\":\"string\"},\"description\":\"What the boundary refused, one line each\"}"
#define S_CHANGE_SET                                                                                                 \
	"\"change_set\":{\"type\":\"object\",\"description\":\"Where the workspace's changes are when they were not applied (review mode: kept for the user, who reviews them with cordon changes DIR --diff and applies them with cordon apply DIR; an overlay whose apply failed)\"," \
	"\"properties\":{\"state\":{\"type\":\"string\",\"description\":\"applied, kept or discarded\"},\"dir\":{\"type\":[\"string\",\"null\"]},\"reason\":{\"type\":[\"string\",\"null\"]},\"entries\":{\"type\":\"integer\"}}}"
#define S_SESSION "\"session\":{\"type\":\"string\",\"description\":\"The id session_open returned\"}"
#define S_PATH(d) "\"path\":{\"type\":\"string\",\"description\":\"" d "\"}"

#define TOOL(name, desc, in, out)                                                                                    \
	"{\"name\":\"" name "\",\"description\":\"" desc "\",\"inputSchema\":{\"type\":\"object\"," in                \
	"},\"outputSchema\":{\"type\":\"object\"," out "}}"

#define MCP_TOOLS_JSON                                                                                               \
	"{\"tools\":["                                                                                               \
	TOOL("run",                                                                                                  \
	     "Run one command inside a cordon boundary, in a fresh empty workspace (its working directory), and get its exit status, output and what the boundary denied. The command sees only system directories read-only, the workspace read-write, a private /tmp and no network unless the policy grants more. A command that exits non-zero is a normal result (status exit-nonzero), not an error. Output is redacted and cut at 64 KiB per stream (stdout_truncated says so).", \
	     "\"properties\":{" S_CMD "\"timeout\":" S_TIMEOUT("The command's") "," S_POLICY "}",                   \
	     "\"properties\":{" S_EXEC_OUT ",\"verdicts\":{\"type\":\"object\",\"description\":\"containment (clean|violations), resources (within|exceeded), task\"},\"report_status\":{\"type\":\"string\"}," S_CHANGE_SET "},\"required\":[\"status\",\"stdout\",\"stderr\",\"denials\"]") \
	"," TOOL("session_open",                                                                                      \
		 "Open a session: a long-lived boundary whose workspace and files persist across session_exec calls until session_close. Returns its id, its workspace (the writable directory) and its working directory.", \
		 "\"properties\":{" S_POLICY ",\"timeout\":" S_TIMEOUT("The session's") ",\"idle_timeout\":" S_TIMEOUT("Close the session after this long without a call:") "}", \
		 "\"properties\":{\"session\":{\"type\":\"string\"},\"workspace\":{\"type\":\"string\"},\"cwd\":{\"type\":\"string\"}},\"required\":[\"session\"]") \
	"," TOOL("session_exec",                                                                                      \
		 "Run a command in an open session (same rules as run, but files stay for the next call). cwd is absolute or relative to the session's working directory; env adds variables.", \
		 "\"properties\":{" S_SESSION "," S_CMD "\"timeout\":" S_TIMEOUT("The command's") ",\"cwd\":{\"type\":\"string\"},\"env\":{\"type\":\"object\",\"additionalProperties\":{\"type\":\"string\"}}},\"required\":[\"session\"]", \
		 "\"properties\":{" S_EXEC_OUT "},\"required\":[\"status\",\"stdout\",\"stderr\",\"denials\"]")         \
	"," TOOL("file_write",                                                                                        \
		 "Write a file in a session, with the session's own rights (only where the session may write: its workspace, /tmp, what the policy grants). Missing directories are made. Give content (text) or content_b64 (bytes).", \
		 "\"properties\":{" S_SESSION "," S_PATH("Absolute, or relative to the session's working directory") ",\"content\":{\"type\":\"string\"},\"content_b64\":{\"type\":\"string\"}},\"required\":[\"session\",\"path\"]", \
		 "\"properties\":{\"path\":{\"type\":\"string\"},\"bytes\":{\"type\":\"integer\"},\"sha256\":{\"type\":\"string\"}},\"required\":[\"path\"]") \
	"," TOOL("file_read",                                                                                         \
		 "Read a file in a session, with the session's own rights. Text comes in content, other bytes in content_b64; at most 1 MiB is returned (truncated says so).", \
		 "\"properties\":{" S_SESSION "," S_PATH("Absolute, or relative to the session's working directory") "},\"required\":[\"session\",\"path\"]", \
		 "\"properties\":{\"path\":{\"type\":\"string\"},\"content\":{\"type\":\"string\"},\"content_b64\":{\"type\":\"string\"},\"bytes\":{\"type\":\"integer\"},\"truncated\":{\"type\":\"boolean\"}},\"required\":[\"path\",\"bytes\"]") \
	"," TOOL("file_list",                                                                                         \
		 "List a directory in a session (default: its working directory). Symbolic links are listed, never followed.", \
		 "\"properties\":{" S_SESSION "," S_PATH("The directory, absolute or relative to the session's working directory") "},\"required\":[\"session\"]", \
		 "\"properties\":{\"path\":{\"type\":\"string\"},\"entries\":{\"type\":\"array\",\"items\":{\"type\":\"object\",\"properties\":{\"name\":{\"type\":\"string\"},\"type\":{\"type\":\"string\"},\"size\":{\"type\":\"integer\"},\"mode\":{\"type\":\"string\"}}}}},\"required\":[\"entries\"]") \
	"," TOOL("session_close",                                                                                     \
		 "Close a session: every process of it ends. Returns its report: status, every denial (one line each), the files it changed in its workspace and the verdicts.", \
		 "\"properties\":{" S_SESSION "},\"required\":[\"session\"]",                                           \
		 "\"properties\":{\"session\":{\"type\":\"string\"},\"status\":{\"type\":\"string\"},\"end\":{\"type\":\"string\"},\"denials\":{\"type\":\"array\",\"items\":{\"type\":\"string\"}},\"changes\":{\"type\":\"array\",\"items\":{\"type\":\"object\",\"properties\":{\"path\":{\"type\":\"string\"},\"bytes\":{\"type\":\"integer\"}}}},\"execs\":{\"type\":\"integer\"},\"verdicts\":{\"type\":\"object\"}," S_CHANGE_SET "},\"required\":[\"session\",\"status\",\"denials\"]") \
	"," TOOL("changes",                                                                                           \
		 "What a session has changed in its workspace so far, before anything reaches the host: each path created, modified or deleted, and a unified diff of the text files (cut at 1 MiB, diff_truncated says so). With cordon mcp --review (or a policy whose filesystem.workspace_mode is review) nothing is ever applied to the host directory: the user reviews these changes and applies them with cordon apply. A session in direct mode has none (an error).", \
		 "\"properties\":{" S_SESSION ",\"snapshot\":{\"type\":\"string\",\"description\":\"A snapshot of the session (session_snapshot): its changes instead of the workspace's now\"}},\"required\":[\"session\"]",                                           \
		 "\"properties\":{\"session\":{\"type\":\"string\"},\"snapshot\":{\"type\":\"string\"},\"changes\":{\"type\":\"array\",\"items\":{\"type\":\"object\",\"properties\":{\"path\":{\"type\":\"string\"},\"change\":{\"type\":\"string\",\"description\":\"created, modified or deleted\"},\"type\":{\"type\":\"string\",\"description\":\"file, or other (a link, a directory, a special file: listed, never opened)\"},\"bytes\":{\"type\":\"integer\"},\"sha256\":{\"type\":[\"string\",\"null\"],\"description\":\"of a regular file's new content\"}}}},\"truncated\":{\"type\":\"boolean\"},\"refused\":{\"type\":\"array\",\"items\":{\"type\":\"string\"},\"description\":\"entries an apply would never apply (a FIFO, a socket, a device node), one line each\"},\"protected\":{\"type\":\"array\",\"items\":{\"type\":\"string\"},\"description\":\"entries at a protected path (.git/hooks...), held back by an apply\"},\"diff\":{\"type\":\"string\"},\"diff_bytes\":{\"type\":\"integer\"},\"diff_truncated\":{\"type\":\"boolean\"},\"hosts\":{\"type\":\"array\",\"items\":{\"type\":\"string\"}}},\"required\":[\"session\",\"changes\",\"diff\"]") \
	"," TOOL("session_snapshot",                                                                                  \
		 "Take a snapshot of a session's workspace as it is now (its changes; the session's processes are frozen for the copy), to go back to with session_restore or to branch from with session_fork. Paths outside the session's own workspace (cordon mcp --workspace DIR, a policy's filesystem.write) are not in it: not_covered lists them.", \
		 "\"properties\":{" S_SESSION "},\"required\":[\"session\"]",                                           \
		 "\"properties\":{\"session\":{\"type\":\"string\"},\"snapshot\":{\"type\":\"string\"},\"bytes\":{\"type\":\"integer\"},\"files\":{\"type\":\"integer\"},\"not_covered\":{\"type\":\"array\",\"items\":{\"type\":\"string\"}}},\"required\":[\"session\",\"snapshot\"]") \
	"," TOOL("session_restore",                                                                                   \
		 "Put a session's workspace back as it was at one of its snapshots (session_snapshot). Commands still running in the session are ended first (their status: restored).", \
		 "\"properties\":{" S_SESSION ",\"snapshot\":{\"type\":\"string\",\"description\":\"The id session_snapshot returned\"}},\"required\":[\"session\",\"snapshot\"]", \
		 "\"properties\":{\"session\":{\"type\":\"string\"},\"restored\":{\"type\":\"string\"}},\"required\":[\"session\",\"restored\"]") \
	"," TOOL("session_snapshot_changeset",                                                                        \
		 "Keep a snapshot's changes (session_snapshot) as a change set the user applies to the host with cordon apply DIR, as a review-mode session keeps its own: exactly what the workspace had changed at that snapshot, nothing after it. The session goes on as it was.", \
		 "\"properties\":{" S_SESSION ",\"snapshot\":{\"type\":\"string\",\"description\":\"The id session_snapshot returned\"}},\"required\":[\"session\",\"snapshot\"]", \
		 "\"properties\":{\"session\":{\"type\":\"string\"},\"snapshot\":{\"type\":\"string\"},\"dir\":{\"type\":\"string\",\"description\":\"The change set: cordon changes DIR --diff, cordon apply DIR\"},\"hosts\":{\"type\":\"array\",\"items\":{\"type\":\"string\"}},\"files\":{\"type\":\"integer\"},\"bytes\":{\"type\":\"integer\"}},\"required\":[\"session\",\"snapshot\",\"dir\"]") \
	"," TOOL("session_fork",                                                                                      \
		 "Open a new session whose workspace starts as this session's is now, or as it was at one of its snapshots: try something in the fork, keep the session as it is. The two go on independently (close each with session_close).", \
		 "\"properties\":{" S_SESSION ",\"snapshot\":{\"type\":\"string\",\"description\":\"A snapshot of the session (else: its workspace now)\"}},\"required\":[\"session\"]", \
		 "\"properties\":{\"session\":{\"type\":\"string\",\"description\":\"The new session's id\"},\"forked_from\":{\"type\":\"string\"},\"workspace\":{\"type\":\"string\"},\"cwd\":{\"type\":\"string\"}},\"required\":[\"session\",\"forked_from\"]") \
	"]}"
