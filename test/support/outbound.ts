import { loadConfig } from '../../src/config/load-config';
import { createOutboundFetch } from '../../src/outbound/outbound-fetch';

/** The outbound client as `npm run dev` configures it (the fakes tests talk to listen on loopback). */
export const devOutboundFetch = createOutboundFetch(loadConfig({ SPUR_OUTBOUND_ALLOW_PRIVATE: 'true' }).outbound);
