import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { History } from '@temporalio/common/lib/proto-utils';
import * as proto from '@temporalio/proto';
import { patchProtobufRoot } from '@temporalio/proto/lib/patch-protobuf-root';

interface ProtoJson {
  fromJson(type: unknown, json: unknown, options: { ignoreUnknownFields: boolean }): History;
  toJson(type: unknown, message: unknown): unknown;
}

/**
 * protobufjs's proto-JSON codec and the History type, both from @temporalio/proto's protobufjs:
 * while npm installs a separate protobufjs copy under @temporalio/common, the SDK's own helpers
 * (`historyFromJSON`, `historyToJSON` in @temporalio/common/lib/proto-utils, also used by the
 * replayer for JSON histories) fail their `instanceof Type` check ("type must be a Type").
 */
function historyCodec(): { protojson: ProtoJson; historyType: unknown } {
  const protojson = createRequire(require.resolve('@temporalio/proto'))('protobufjs/ext/protojson') as ProtoJson;
  const root = patchProtobufRoot(proto) as unknown as { lookupType(name: string): unknown };
  return { protojson, historyType: root.lookupType('temporal.api.history.v1.History') };
}

/** A history from canonical proto JSON (what `historyToProtoJson` writes). */
function historyFromProtoJson(json: unknown): History {
  const { protojson, historyType } = historyCodec();
  return protojson.fromJson(historyType, json, { ignoreUnknownFields: true });
}

/** A history as canonical proto JSON, the form test/fixtures/histories keeps. */
export function historyToProtoJson(history: History): unknown {
  const { protojson, historyType } = historyCodec();
  return protojson.toJson(historyType, proto.temporal.api.history.v1.History.fromObject(history));
}

/** A recorded history file (test/fixtures/histories/*.json, scripts/capture-history.ts). */
export function readHistoryFile(file: string): History {
  return historyFromProtoJson(JSON.parse(readFileSync(file, 'utf8')));
}
