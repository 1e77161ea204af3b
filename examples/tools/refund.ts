import { z } from 'zod';
import { defineTool } from 'keel';

/** The payment provider's client: it takes an idempotency key, as most payment APIs do. */
declare const payments: {
  refund(orderId: string, amount: number, idempotencyKey: string): Promise<{ receipt: string }>;
};

/** A tool with a side effect that must happen at most once, however often the call is retried. */
export const refundOrder = defineTool({
  name: 'refund_order',
  description: 'Refund an order.',
  schema: z.object({ orderId: z.string(), amount: z.number().positive() }),
  needsApproval: ({ amount }) => amount > 100, // a person approves large refunds (keel approve / reject)
  async execute({ orderId, amount }, context) {
    const { receipt } = await context.once('refund', () =>
      payments.refund(orderId, amount, context.idempotencyKey),
    );
    return { receipt };
  },
});
