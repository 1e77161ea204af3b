import { MAX_TURNS_LIMIT } from '../contract/defaults.js';

/** The options every command takes, and what the exit codes mean. */
const COMMON = `
Options for every command:
  --task-queue <name>   task queue (default: KEEL_TASK_QUEUE or "keel")
  --json                machine-readable output on stdout; a failure is one
                        {"error": {"code": "<kebab-case>", "message": "…", …}}
  -h, --help            this help

Without TEMPORAL_ADDRESS, \`run\` and \`worker\` use the Temporal server on localhost:7233, or start one
(persisted in ./.keel, Web UI on http://localhost:8233) that keeps running after them until
\`keel server stop\`; the other commands only look for one.
Exit codes: 0 done, 1 error, 2 bad usage, 3 the run ended without completing, 4 an eval's case failed.`;

/** Each command's `--help`, and `keel --help`. */
export const HELP: Record<string, string> = {
  keel: `keel: durable AI agent runs on Temporal

Usage: keel <command> [options]

Commands:
  run "<task>"     start a run and follow it (Ctrl-C: cancel or detach)
  chat [<id>]      talk to a session: type messages, approve calls inline
  worker           run a worker until Ctrl-C
  status <id>      a run's live state
  follow <id>      print a run's progress until it ends
  result <id>      wait for a run's result
  list             recent runs
  cancel <id>      cancel a run
  approve <id> <call>   let a call that waits for approval run
  reject <id> <call>    refuse a call that waits for approval
  send <id> "<text>"    give a run (or session) a message
  end <id>         end a session
  export <id>      a run's whole history as a file, for evals (docs/evals.md)
  schedule create|list|pause|unpause|trigger|delete   runs on a cron or interval
  server start|status|stop   the local Temporal server Keel runs (see \`keel server --help\`)
  codec-server     decode encrypted payloads for the Web UI and \`temporal\` (docs/encryption.md)

\`keel <command> --help\` for a command's options.${COMMON}`,
  run: `Usage: keel run "<task>" [options]

Starts a run and follows it: each turn, each tool call and its outcome, tokens. With
TEMPORAL_ADDRESS and no worker polling the task queue, it says so and waits for one.

  --demo                 use a built-in scripted model (no key needed; it is not an AI); its
                         model and worker live in this process, so it cannot --detach
  --detach               print the run id and return at once
  --id <run id>          workflow id to use (a business key makes starts idempotent): a run that
                         has that id already is not started again; the command follows it, or
                         shows how it ended, and exits 1 if it was started with another task
  --agent <name>         a named agent the worker offers: its instructions, model, tools,
                         approvals and limits, unless other options set their own
  --model <name>         model (default: the agent's, else KEEL_MODEL)
  --max-turns <n>        model turns before the run stops (1 to ${MAX_TURNS_LIMIT})
  --tools <a,b>          tools to offer (default: all the worker has); names as the worker has
                         them, each once
  --approve <a,b>        tools whose calls wait for your approval (keel approve / reject)
  --session              stay open after the answer for \`keel send\` messages; following stops at
                         each answer
  --conversation <mode>  chained (the model server keeps the conversation) or stateless (the run
                         sends it whole each turn, for servers that keep none); default: the
                         worker's KEEL_CONVERSATION
  --output-schema <file> a JSON Schema (root an object) the answer must match: the model is asked
                         for it, an answer that does not match goes back to it (twice at most),
                         and --json's result carries the value as "output"
  --instructions <text>  system instructions${COMMON}`,
  chat: `Usage: keel chat [<session id>] [options]

Talks to a session run: type a message at \`you> \`, watch the answer come, approve or reject
calls inline ([y/n/e(dit)]). The first message starts a new session; \`keel chat <id>\` continues
an open one. /end or Ctrl-D ends the session; Ctrl-C while it works asks to cancel or detach,
Ctrl-C at an empty prompt leaves it open for later.

  --id <run id>          the session's id: continued when it is open, else the new session's id
  --agent <name>         a named agent the worker offers (its instructions, model, tools, …)
  --model <name>         model (default: the agent's, else KEEL_MODEL)
  --max-turns <n>        model turns before the session stops
  --tools <a,b>          tools to offer (default: all the worker has)
  --approve <a,b>        tools whose calls wait for your approval (asked inline)
  --conversation <mode>  chained or stateless (default: the worker's KEEL_CONVERSATION)
  --instructions <text>  system instructions${COMMON}`,
  worker: `Usage: keel worker [options]

Runs a worker: it hosts the agentRun workflow and its activities until SIGINT/SIGTERM. Configured by
environment variables (see README: OPENAI_API_KEY, KEEL_WORKSPACE, …).

  --tools <module>       a JavaScript or TypeScript module exporting your own tools
                         (\`export const tools = [defineTool(…)]\`), offered beside the built-in
                         ones (default: KEEL_TOOLS_MODULE)${COMMON}`,
  status: `Usage: keel status <run id> [options]

A running run: its live state (turn, tokens, calls waiting for approval), answered by a worker, or
that no worker polls its task queue
(or answers within 5 s). A run that has ended: how it ended (completed, failed and why,
cancelled), read from Temporal at once, with or without a worker.${COMMON}`,
  follow: `Usage: keel follow <run id> [options]

Prints progress until the run ends. Ctrl-C stops following; the run goes on. Of a run that has
ended: how it ended and its result, at once.

  --stream       print the run's stream instead, one JSON line per event
                 ({"offset":…,"event":{…}}: text deltas, tool calls, observations, turn ends,
                 resets, the end), until it ends; exit code 3 when it ended without completing
  --from <n>     with --stream: start at this offset (one past the last one read, to go on)${COMMON}`,
  result: `Usage: keel result <run id> [options]

Waits for the run to end and prints its result. Exit code 3 when it ended without completing,
1 when there is no such run.${COMMON}`,
  schedule: `Usage: keel schedule create <id> "<task>" (--every <interval> | --cron "<expr>") [options]
       keel schedule list | pause <id> [--note <text>] | unpause <id> | trigger <id> | delete <id>

Temporal Schedules of Keel runs: each time comes, the schedule starts an ordinary run of the task
(workflow id <schedule id>-<time>, search attribute TemporalScheduledById = <schedule id>).

  --every <interval>     a whole number and s, m, h or d: 30m, 1h, 1d
  --cron "<expr>"        minute hour day month weekday, e.g. "0 9 * * 1-5"
  --timezone <zone>      the cron's IANA time zone, e.g. Europe/Berlin (default UTC)
  --overlap <policy>     when the last run still runs: skip (default), buffer_one, buffer_all,
                         cancel_other, terminate_other or allow_all
  --paused               create it paused
  --note <text>          why it exists (create) or is paused (pause)
The run's options, as for keel run: --agent, --model, --max-turns, --tools, --instructions,
--approve, --conversation, --output-schema.
\`keel list --query 'TemporalScheduledById = "<id>"'\` lists a schedule's runs.${COMMON}`,
  list: `Usage: keel list [--limit <n>] [--query <visibility query>] [options]

  --limit <n>         most runs to show (default 20)
  --query <filter>    extra visibility filter, e.g. 'KeelStatus = "failed"'${COMMON}`,
  cancel: `Usage: keel cancel <run id> [options]${COMMON}`,
  approve: `Usage: keel approve <run id> <call id> [--args <json>] [--note <text>] [options]

Lets a call that waits for approval run (\`keel status\` lists them).

  --args <json>    run it with these arguments instead (checked against the tool's schema)
  --note <text>    a note for the record and the model${COMMON}`,
  reject: `Usage: keel reject <run id> <call id> [--reason <text>] [options]

Refuses a call that waits for approval; the model sees the reason and can try another way.

  --reason <text>  why${COMMON}`,
  send: `Usage: keel send <run id> "<message>" [--wait] [options]

Gives a run a user message. It reaches the model at the next turn boundary; a session that waits
for a message starts a turn at once.

  --wait           follow the run until it has answered${COMMON}`,
  server: `Usage: keel server start|status|stop [options]

The local Temporal server that \`keel run\` and \`keel worker\` start without TEMPORAL_ADDRESS. It runs in
its own session (Ctrl-C in a terminal never reaches it) and keeps running after the command that
started it, for later commands. Its PID, ports and start time are in <KEEL_DATA_DIR>/server.json, its
log in <KEEL_DATA_DIR>/server.log.

  start     start it (ports KEEL_LOCAL_PORT, KEEL_LOCAL_UI_PORT); says so when it already runs
  status    its PID, address, Web UI, data and uptime; exit code 0 when it runs, 1 when not
  stop      end it: SIGTERM to the recorded PID, only once it is verified to be that server${COMMON}`,
  'codec-server': `Usage: keel codec-server --token-file <file> [--origin <url>] [options]

Serves Temporal's codec protocol (POST …/decode and …/encode) with the keys the workers encrypt with
(KEEL_CODEC_KEYS_FILE, or KEEL_CODEC_KEY with KEEL_CODEC_KEY_ID), so the Web UI and
\`temporal workflow show --codec-endpoint <url> --codec-auth "Bearer <token>"\` show runs decoded.
Every request needs the token; a browser signs in once at the server's own page (see docs/encryption.md).

  --token-file <file>   the bearer token callers must send (at least 16 characters)
  --origin <url>[,…]    the Web UI origins browsers may call from, e.g. http://localhost:8233
  --port <port>         default 8888 (0: any free port)
  --host <address>      default 127.0.0.1
  --namespace <name>    the namespace it decodes for (default TEMPORAL_NAMESPACE, else "default")${COMMON}`,
  eval: `Usage: keel eval [<eval file>] [--run <id>]… [--history <file>]… [--query <filter>] [options]

Re-runs the tasks of recorded runs against a candidate, as one evalRun workflow with a child run per
case; the candidate's tool calls are answered from each recording (same tool, equal arguments), the
rest as --unmatched says. Then compares each case with its recording and prints a table. Exit code 0
when every case passes its assertions (without any: the same answer, no divergence), 4 when not.

Cases (added to the eval file's):
  --run <id>               a recorded run (repeatable)
  --history <file>         a run exported with \`keel export\` (repeatable)
  --query <filter>         ended runs matching a visibility filter, e.g. 'KeelStatus = "completed"'
  --limit <n>              most runs --query brings in (default 20, at most 1000); without
                           --query, the eval file's query cases' limit
The candidate (over the eval file's):
  --instructions <text>    other instructions (or --instructions-file <file>)
  --model <name>           another model
  --agent <name>           a named agent of the worker's
  --tools <a,b>            another tool set
  --conversation <mode>    chained or stateless (default: the recorded run's, else the worker's)
Replay:
  --unmatched <policy>     a call with no recorded answer: refuse (default; the model is told), run
                           (read-only tools, and those in --allow-tools), or diverge (the case stops)
  --allow-tools <a,b>      side-effecting tools --unmatched run may run
Report:
  --match exact|normalised how final answers compare (default exact), or --judge <module>
  --html <file>            also write a self-contained HTML report
  --concurrency <n>        cases running at once (default 4)
  --id <eval id>           the eval's workflow id; an eval already there under it is followed${COMMON}`,
  export: `Usage: keel export <run id> [--output <file>] [options]

Writes the run's whole history (every execution, across continue-as-new) as one JSON file that
\`keel eval\` reads as a case (docs/evals.md). Payloads stay encrypted when the run is (reading the
file needs the same keys); payloads in the payload store (KEEL_PAYLOAD_STORE) are written into the
file. A run that is still going exports what it has done so far.

  -o, --output <file>   write the file there (default: stdout)${COMMON}`,
  end: `Usage: keel end <run id> [options]

Ends a session: at once when it is idle, else after its current answer.${COMMON}`,
};
