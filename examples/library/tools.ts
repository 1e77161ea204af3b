import { z } from 'zod';
import { defineTool, ToolError } from 'keel';

const orders: Record<string, { status: string; carrier: string }> = {
  'A-1': { status: 'shipped', carrier: 'DHL' },
};

/** The team's own tool: one zod schema gives the model its JSON Schema and checks the model's arguments. */
export const lookupOrder = defineTool({
  name: 'lookup_order',
  description: 'Look up an order by id.',
  schema: z.object({ orderId: z.string().describe('Order id, e.g. A-1') }),
  readOnly: true,
  execute({ orderId }) {
    const order = orders[orderId];
    if (order === undefined) throw new ToolError(`No order ${orderId}`); // the model sees this message
    return { orderId, ...order };
  },
});
