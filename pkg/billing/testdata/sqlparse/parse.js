// Reads [{name, database, sql}] as JSON on stdin; writes [{name, error, offset}]
// (error "" when the statement parses) for pkg/billing/sqlparse_test.go.
const { Parser } = require('node-sql-parser');
const parser = new Parser();
let input = '';
process.stdin.on('data', (d) => { input += d; });
process.stdin.on('end', () => {
  const out = JSON.parse(input).map(({ name, database, sql }) => {
    try {
      parser.astify(sql, { database });
      return { name, error: '', offset: -1 };
    } catch (e) {
      return { name, error: String(e.message), offset: e.location ? e.location.start.offset : -1 };
    }
  });
  process.stdout.write(JSON.stringify(out));
});
