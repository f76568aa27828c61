import { z } from 'zod';
import { fixedOutputConfig } from '../base-config.js';
import { openObject } from '../shared-models.js';
import type { NodeTypeDefinition } from '../types.js';

const output = z.object({
  provider: z.string(),
  message_id: z.string(),
  status: z.string(),
  raw_response: z.string(),
});

const config = fixedOutputConfig(output, {
  provider: z.enum(['resend', 'sendgrid']).default('resend'),
  from_template: z.string().default(''),
  to_template: z.string().default(''),
  subject_template: z.string().default(''),
  content_template: z.string().default(''),
});

/** Sends a plain-text email through Resend or SendGrid. PySpur gives it no logo or label. */
export const sendEmailNode: NodeTypeDefinition<typeof config> = {
  name: 'SendEmailNode',
  displayName: 'Send Email',
  category: 'Tools',
  visualTag: { acronym: 'SEN', color: '#FD7E14' },
  config,
  input: openObject(),
  output,
  executionKind: 'io',
};
