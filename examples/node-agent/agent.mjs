// An agent's tool loop on one cordon session, with cordon-client
// (clients/node): open a session, write the task's file, run commands the
// model chooses, read the result back, close (the session's report).
//
//   cordon serve --socket /tmp/cordon.sock &
//   node examples/node-agent/agent.mjs /tmp/cordon.sock
//
// `nextCommand` stands in for your model: given the history, the next shell
// command, or null when the task is done.
import { Client } from '../../clients/node/src/index.js';

const socketPath = process.argv[2] ?? '/run/cordon.sock';

const plan = ['python3 task.py > answer.txt || sh -c "echo 42" > answer.txt', 'cat answer.txt'];
function nextCommand(history) {
  return plan[history.length - 1] ?? null;
}

const client = new Client({ socketPath });
const report = await client.withSession({ policy: { limits: { memory: '512M' } }, idleTimeout: '10m' }, async (box) => {
  await box.files.write('task.py', 'print(6 * 7)\n');
  const history = ['compute 6*7 into answer.txt'];
  for (let cmd; (cmd = nextCommand(history)) !== null;) {
    const r = await box.exec(['/bin/sh', '-c', cmd], { timeout: 60 });
    history.push(`$ ${cmd}\n[${r.status} ${r.exitCode}]\n${r.text}${r.stderr.toString()}`);
    console.log(history.at(-1));
  }
  console.log('answer:', (await box.files.read('answer.txt')).toString().trim());
  return box.close();
});
console.log('session', report.session?.id ?? '', 'status', report.status, 'execs', report.execs.length);
