import { z } from 'zod';
import { integrationNode, renderOrFirstString } from './http/integration-node.js';
import { connect } from './http/service-client.js';
import { SERVICES } from './http/services.js';
import { captionTracks, preferredTrack, trackText, videoIdOf } from './youtube-api.js';

/** The transcript of a YouTube video: its English captions (else the first track), as one text. */
export const youTubeTranscriptNode = integrationNode({
  name: 'YouTubeTranscriptNode',
  displayName: 'YouTubeTranscript',
  category: 'Integrations',
  tag: 'YTN #DC3545',
  logo: '/images/youtube.png',
  categoryLabel: 'YouTube',
  output: z.object({ transcript: z.string() }),
  config: { video_url_template: z.string().default('') },
  async run(config, input, ctx) {
    const videoId = videoIdOf(await renderOrFirstString(config.video_url_template, input, 'video_url_template'));
    const api = await connect(ctx, SERVICES.youtube);
    const track = preferredTrack(await captionTracks(api, videoId));
    return { transcript: await trackText(api, track.baseUrl) };
  },
});
