import { z } from 'zod';
import { defineTool, ToolError } from 'keel';

/** A tool over the team's own API: the same zod schema gives the model its JSON Schema and checks its arguments. */
export const lookupOrder = defineTool({
  name: 'lookup_order',
  description: 'Look up an order by id.',
  schema: z.object({ orderId: z.string(), includeItems: z.boolean().default(false) }),
  readOnly: true,
  timeoutSeconds: 20,
  async execute({ orderId, includeItems }, { signal }) {
    const response = await fetch(`https://orders.internal/${orderId}?items=${includeItems}`, { signal });
    if (response.status === 404) throw new ToolError(`No order ${orderId}`); // shown to the model
    return (await response.json()) as { status: string }; // any JSON value, or a string
  },
});
