"""An order's money (DESIGN.md §11 "Payments"): card checks and the gateway (`payments`),
the durable record of a card charge (`intents`), refunds to cards (`refunds`), airline
credit (`credits`), the payment provider's own webhooks (`provider_events`), fees and
penalties (`fees`), payment rows and e-tickets of a paid order (`tickets`) and the
books audit (`audit`). It writes money rows and the order's history; it books and
changes no journeys."""
