import { z } from 'zod';
import { defineRoute, type MountableRoute } from '../../http/route';
import { buildSupportedNodeTypes } from '../../nodes/catalogue';

const NodeTypeEntry = z.record(z.string(), z.unknown());

export function nodeTypeRoutes(): MountableRoute[] {
  return [
    defineRoute({
      method: 'get',
      path: '/node/supported_types/',
      summary: 'Schemas of every node type, by category',
      tags: ['nodes'],
      response: z.record(z.string(), z.array(NodeTypeEntry)),
      handler: () => buildSupportedNodeTypes(),
    }),
  ];
}
