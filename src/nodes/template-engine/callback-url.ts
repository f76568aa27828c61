import { Callable, TemplateError } from './values.js';

/**
 * What `callback_url("<node id>")` answers in one render: the URLs of the nodes the template names
 * (minted before the render, outside the render's thread, which holds no key), or why it cannot.
 */
export type CallbackUrls = { urls: Record<string, string> } | { refused: string };

/** The `callback_url` function a render with callback URLs sees. */
export function callbackUrlFunction(callbacks: CallbackUrls): Callable {
  return new Callable('callback_url', ({ positional: [id] }) => {
    if ('refused' in callbacks) throw new TemplateError(callbacks.refused);
    if (typeof id !== 'string') throw new TemplateError('callback_url() takes the id of a WaitForCallbackNode');
    const url = Object.hasOwn(callbacks.urls, id) ? callbacks.urls[id] : undefined;
    if (url === undefined)
      throw new TemplateError(
        `callback_url() needs the node's id written out as a string, e.g. callback_url("wait_1")`,
      );
    return url;
  });
}
