import { createWorkspaceMembers } from '../db/workspace-members';
import { createWorkspaceStore } from '../db/workspaces';
import { DEFAULT_WORKSPACE } from '../db/workspace-scope';
import { parseArgs } from 'node:util';
import { loadConfig } from '../config/load-config';
import { connectMongo } from '../db/connection';
import { createAccessKeyStore } from '../db/access-keys';
import { createAccessUserStore } from '../db/access-users';
import { createBrowserSessionStore } from '../db/browser-sessions';
import { createModels } from '../db/models';
import { prepareDatabase } from '../db/prepare-database';
import { AccessUserCreateRequest, AccessUserUpdateRequest } from '../modules/access/access.schemas';
import { createAccessService } from '../modules/access/access.service';

const USAGE = `usage: npm run create-user -- <username> [--role admin] [--password-stdin] [--key <name>] [--update]

Creates a Spur user in the configured MongoDB (SPUR_MONGO_URI …): how the first admin is made.
  --role <role>       viewer, approver, operator, builder or admin (default admin)
  --password-stdin    read the password (10+ characters) from the first line of stdin
  --key <name>        also make an API key of the user, printed once
  --update            the user exists: set the role (and password), enable them`;

async function readStdinLine(): Promise<string> {
  let text = '';
  for await (const chunk of process.stdin) {
    text += String(chunk);
    if (text.includes('\n') || text.length > 1024) break;
  }
  return text.split('\n')[0]?.replace(/\r$/, '') ?? '';
}

/**
 * `npm run create-user`: makes (or, with --update, resets) a user from the command line, so an
 * installation without configured keys gets its first admin without a request anyone could send.
 */
async function main(): Promise<number> {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      role: { type: 'string', default: 'admin' },
      'password-stdin': { type: 'boolean', default: false },
      key: { type: 'string' },
      update: { type: 'boolean', default: false },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help || positionals.length !== 1) {
    process.stderr.write(`${USAGE}\n`);
    return values.help ? 0 : 2;
  }
  const password = values['password-stdin'] ? await readStdinLine() : undefined;
  const fields = AccessUserCreateRequest.safeParse({ username: positionals[0], role: values.role, password });
  if (!fields.success) {
    process.stderr.write(
      `${fields.error.issues.map((i) => `${i.path.join('.') || 'input'}: ${i.message}`).join('\n')}\n`,
    );
    return 2;
  }
  const mongo = await connectMongo(loadConfig());
  try {
    const models = createModels(mongo);
    await prepareDatabase(models);
    const users = createAccessUserStore(models);
    const keys = createAccessKeyStore(models);
    const access = createAccessService({
      users,
      keys,
      sessions: createBrowserSessionStore(models),
      workspaces: createWorkspaceStore(models),
      members: createWorkspaceMembers(models, users),
    });
    const existing = await users.byUsername(fields.data.username);
    if (existing && !values.update) {
      process.stderr.write(`user '${existing.username}' exists (${existing._id}): --update changes it\n`);
      return 1;
    }
    const user = existing
      ? await access.updateUser(
          existing._id,
          AccessUserUpdateRequest.parse({ role: fields.data.role, disabled: false, password: fields.data.password }),
        )
      : await access.createUser(fields.data);
    process.stdout.write(`${existing ? 'updated' : 'created'} ${user.id} ${user.username} (${user.role})\n`);
    if (values.key !== undefined) {
      const made = await access.createKey(
        {
          userId: null,
          username: 'create-user',
          keyId: null,
          via: 'key',
          role: 'admin',
          workspaceId: DEFAULT_WORKSPACE,
          installationAdmin: true,
          sessionId: null,
        },
        { name: values.key, user_id: user.id },
      );
      process.stdout.write(`key ${made.id}: ${made.key}\n`);
    }
    return 0;
  } finally {
    await mongo.close();
  }
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`create-user failed: ${(err as Error).message}\n`);
    process.exit(1);
  },
);
