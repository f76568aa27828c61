import { createHmac, timingSafeEqual } from 'node:crypto';
import { isValueRef, type ValueRef } from '../engine/value-ref';

/** 128 bits: a forger's one guess in 2^128; keeps a ref's JSON well under the smallest threshold (256 bytes). */
const SEAL_BYTES = 16;

/**
 * Seals on value refs. A ref is only ever written by Spur's value store, which seals it with an
 * HMAC of its id and size under a key derived from SPUR_SECRET_KEY (api and worker share it). Any
 * other object of the ref's shape (in a run input, a node's output, a model's JSON, a dataset cell,
 * an integration's answer) lacks a valid seal and stays plain data: no value is read through it,
 * so user content can neither splice in another run's stored value nor point at a missing one.
 */
export interface ValueSeal {
  seal(id: string, bytes: number): string;
  /** A ref this installation's key sealed. */
  isSealed(value: unknown): value is ValueRef;
}

export function createValueSeal(secretKey: Buffer): ValueSeal {
  // Its own key: a seal is no use against the other things SPUR_SECRET_KEY protects.
  const key = createHmac('sha256', secretKey).update('spur value ref seal v1').digest();
  const mac = (id: string, bytes: number) =>
    createHmac('sha256', key).update(`${bytes}\n${id}`).digest().subarray(0, SEAL_BYTES);
  return {
    seal: (id, bytes) => mac(id, bytes).toString('base64url'),
    isSealed(value: unknown): value is ValueRef {
      if (!isValueRef(value)) return false;
      const { id, bytes, seal } = value.__spur_value_ref__;
      const given = Buffer.from(seal, 'base64url');
      return given.length === SEAL_BYTES && timingSafeEqual(given, mac(id, bytes));
    },
  };
}
