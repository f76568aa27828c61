import { z } from 'zod';
import { NodeExecutionError } from '../errors.js';
import type { ServiceClient } from './http/service-client.js';
import { serviceFailure } from './http/service-errors.js';
import { SERVICES } from './http/services.js';

/**
 * YouTube captions over plain HTTP, the way the transcript libraries do it: the watch page gives
 * the player API key, the player API lists the caption tracks, and a track's URL answers XML.
 */

/** The 11-character id from a watch, short, embed or shorts URL, or an id given as it is. */
export function videoIdOf(url: string): string {
  const text = url.trim();
  if (/^[\w-]{11}$/.test(text)) return text;
  let parsed: URL;
  try {
    parsed = new URL(text);
  } catch {
    throw new NodeExecutionError(`'${text}' is neither a YouTube URL nor a video id`);
  }
  const id = parsed.hostname.endsWith('youtu.be')
    ? parsed.pathname.slice(1)
    : (parsed.searchParams.get('v') ?? /^\/(?:embed|shorts|live|v)\/([^/?#]+)/.exec(parsed.pathname)?.[1]);
  if (!id || !/^[\w-]{11}$/.test(id)) throw new NodeExecutionError(`No video id in '${text}'`);
  return id;
}

const track = z.looseObject({ baseUrl: z.string(), languageCode: z.string().optional(), kind: z.string().optional() });
const player = z.looseObject({
  playabilityStatus: z.looseObject({ status: z.string().optional(), reason: z.string().optional() }).optional(),
  captions: z
    .looseObject({ playerCaptionsTracklistRenderer: z.looseObject({ captionTracks: z.array(track).optional() }) })
    .optional(),
});

/** The ANDROID client answers caption URLs that need no proof-of-origin token. */
const PLAYER_CLIENT = { clientName: 'ANDROID', clientVersion: '20.10.38' };

export async function captionTracks(api: ServiceClient, videoId: string): Promise<z.output<typeof track>[]> {
  const page = await api.request({ path: '/watch', query: { v: videoId } });
  const key = /"INNERTUBE_API_KEY":\s*"([^"]+)"/.exec(page.text)?.[1];
  if (!key) {
    const why = page.text.includes('g-recaptcha')
      ? 'YouTube asks for a captcha (too many requests from this address)'
      : 'the watch page has no player key';
    throw serviceFailure(SERVICES.youtube, `${why} for video ${videoId}`);
  }
  const answer = await api.post(
    `/youtubei/v1/player?key=${encodeURIComponent(key)}`,
    { context: { client: PLAYER_CLIENT }, videoId },
    player,
  );
  const playable = answer.playabilityStatus?.status ?? 'OK';
  if (playable !== 'OK')
    throw serviceFailure(
      SERVICES.youtube,
      `video ${videoId} is not playable (${playable}${answer.playabilityStatus?.reason ? `: ${answer.playabilityStatus.reason}` : ''})`,
    );
  const tracks = answer.captions?.playerCaptionsTracklistRenderer.captionTracks ?? [];
  if (!tracks.length) throw serviceFailure(SERVICES.youtube, `video ${videoId} has no transcripts`);
  return tracks;
}

/** English first (a manual track before an automatic one), else the first track listed. */
export function preferredTrack<T extends { languageCode?: string; kind?: string }>(tracks: T[]): T {
  const english = tracks.filter((t) => t.languageCode?.split('-')[0] === 'en');
  return english.find((t) => t.kind !== 'asr') ?? english[0] ?? (tracks[0] as T);
}

/** A track's text: its `<text>` elements (or `<p>` in the srv3 format), entities decoded, joined by spaces. */
export async function trackText(api: ServiceClient, baseUrl: string): Promise<string> {
  // The track URL names YouTube's host; the request goes to the configured base with its path and query.
  const url = new URL(baseUrl, 'https://www.youtube.com');
  url.searchParams.delete('fmt');
  const res = await api.request({ path: `${url.pathname}${url.search}` });
  const lines = [...res.text.matchAll(/<(text|p)\b[^>]*>([\s\S]*?)<\/\1>/g)].map((m) =>
    decodeEntities((m[2] ?? '').replace(/<[^>]*>/g, '')).trim(),
  );
  return lines.filter(Boolean).join(' ');
}

const NAMED: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: ' ' };

/** XML entities, applied twice: caption text arrives escaped inside the escaped document (`&amp;#39;`). */
function decodeEntities(text: string): string {
  const once = (s: string) =>
    s.replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (whole, ref: string) => {
      if (ref[0] !== '#') return NAMED[ref.toLowerCase()] ?? whole;
      const code = ref[1] === 'x' || ref[1] === 'X' ? parseInt(ref.slice(2), 16) : parseInt(ref.slice(1), 10);
      return Number.isFinite(code) && code <= 0x10ffff ? String.fromCodePoint(code) : whole;
    });
  return once(once(text));
}
