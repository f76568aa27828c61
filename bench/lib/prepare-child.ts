// A process that prepares databases with one source tree's code (its first argument: this tree's
// root or a baseline's), as a Spur process does before its first request or task. It reads a
// database name per line of stdin, prepares it on SPUR_BENCH_MONGODB_URI and answers `done <name>`,
// so the bench can read this process's CPU around each preparation.
import path from 'node:path';
import readline from 'node:readline';

interface TreeModules {
  connectMongo(config: {
    mongo: { uri: string; dbName: string; timeoutMs: number };
  }): Promise<{ close(): Promise<void> }>;
  createModels(conn: unknown): unknown;
  prepareDatabase(models: unknown): Promise<void>;
}

async function load(root: string): Promise<TreeModules> {
  const from = (file: string) => import(path.join(root, file)) as Promise<Record<string, unknown>>;
  const [connection, models, prepare] = await Promise.all([
    from('src/db/connection.ts'),
    from('src/db/models/index.ts'),
    from('src/db/prepare-database.ts'),
  ]);
  return {
    connectMongo: connection.connectMongo as TreeModules['connectMongo'],
    createModels: models.createModels as TreeModules['createModels'],
    prepareDatabase: prepare.prepareDatabase as TreeModules['prepareDatabase'],
  };
}

async function main(): Promise<void> {
  const root = process.argv[2];
  const uri = process.env.SPUR_BENCH_MONGODB_URI;
  if (!root || !uri) throw new Error('usage: prepare-child.ts <tree root>, with SPUR_BENCH_MONGODB_URI set');
  const tree = await load(root);
  process.stdout.write('ready\n');
  for await (const line of readline.createInterface({ input: process.stdin })) {
    const dbName = line.trim();
    if (!dbName) continue;
    const conn = await tree.connectMongo({ mongo: { uri, dbName, timeoutMs: 10_000 } });
    await tree.prepareDatabase(tree.createModels(conn));
    await conn.close();
    process.stdout.write(`done ${dbName}\n`);
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
