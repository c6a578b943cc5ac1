// SPDX-License-Identifier: GPL-2.0
// node parquet-arrow.js FILE: the rows of a Parquet file as the Rust
// parquet crate (arrow-rs, through the npm package parquet-wasm) reads
// them, a reader independent of DuckDB's: one line a row, in the file's
// order, values tab-separated, NULL for null.  Modules from $NPM_MODULES.
'use strict';
const fs = require('fs');
const pw = require(process.env.NPM_MODULES + '/parquet-wasm/node/parquet_wasm.js');
const arrow = require(process.env.NPM_MODULES + '/apache-arrow');

try {
	const table = arrow.tableFromIPC(pw.readParquet(fs.readFileSync(process.argv[2])).intoIPCStream());
	const names = table.schema.fields.map(f => f.name);
	const lines = [];

	console.log(table.schema.fields.map(f => `${f.name}:${f.type}:${f.nullable}`).join('\t'));
	for (const row of table) {
		lines.push(names.map(n => row[n] === null ? 'NULL' : String(row[n])).join('\t'));
		if (lines.length === 4096)
			console.log(lines.splice(0).join('\n'));
	}
	if (lines.length)
		console.log(lines.join('\n'));
} catch (e) {
	console.error('parquet-arrow: ' + e.message);
	process.exit(1);
}
