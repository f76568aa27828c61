import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { History } from '@temporalio/common/lib/proto-utils';
import * as proto from '@temporalio/proto';
import { patchProtobufRoot } from '@temporalio/proto/lib/patch-protobuf-root';

/**
 * What `historyFromJSON` (@temporalio/common/lib/proto-utils) does for files in canonical proto
 * JSON, with protobufjs loaded from @temporalio/proto: while npm installs a separate protobufjs copy
 * under @temporalio/common, the SDK's helper (also used by the replayer for JSON histories) fails
 * its `instanceof Type` check ("type must be a Type").
 */
export function historyFromProtoJson(json: unknown): History {
  const protojson = createRequire(require.resolve('@temporalio/proto'))('protobufjs/ext/protojson') as {
    fromJson(type: unknown, json: unknown, options: { ignoreUnknownFields: boolean }): History;
  };
  const root = patchProtobufRoot(proto) as unknown as { lookupType(name: string): unknown };
  return protojson.fromJson(root.lookupType('temporal.api.history.v1.History'), json, { ignoreUnknownFields: true });
}

/** A recorded history file (test/fixtures/histories/*.json, scripts/capture-history.ts). */
export function readHistoryFile(file: string): History {
  return historyFromProtoJson(JSON.parse(readFileSync(file, 'utf8')));
}
