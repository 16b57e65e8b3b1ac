// Wire names of engine enum values that more than one room renders: indexed by the enum's number,
// so a route reads the name of a value and an operator command maps a name back with indexOf.
// Order shapes keep their names beside the shapes (src/wire/orders.ts).

/** Wire names of OrderBookState values. */
export const ORDER_BOOK_STATE_NAMES = ['Open', 'Closed', 'CancelOnly', 'LimitOnly', 'PostOnly'] as const;
