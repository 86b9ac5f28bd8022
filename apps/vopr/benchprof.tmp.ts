import { bench } from './src/bench.js';
bench(3, 500, 48);
const r = bench(3, 3000, 48);
console.log(JSON.stringify(r));
