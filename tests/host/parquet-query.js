// SPDX-License-Identifier: GPL-2.0
// node parquet-query.js FILE SQL...: run each SQL with DuckDB (the npm
// package @duckdb/node-api, from $DUCKDB_NODE_API), 'trace.parquet' in it
// standing for FILE; print the rows, values tab-separated, NULL for null.
'use strict';
const { DuckDBInstance } = require(process.env.DUCKDB_NODE_API);

async function main() {
	const [file, ...queries] = process.argv.slice(2);
	const db = await DuckDBInstance.create(':memory:');
	const con = await db.connect();
	const path = "'" + file.replace(/'/g, "''") + "'";

	for (const q of queries) {
		const reader = await con.runAndReadAll(q.split("'trace.parquet'").join(path));
		for (const row of reader.getRowsJson())
			console.log(row.map(v => v === null ? 'NULL' :
				typeof v === 'object' ? JSON.stringify(v) : String(v)).join('\t'));
	}
}

main().catch(e => {
	console.error('parquet-query: ' + e.message);
	process.exit(1);
});
