"""What every write of an order shares: identifiers of orders and their parts (`ids`),
new rows written in one INSERT (`rows`), and the order's history, one function per
event kind (`events`). It imports only the models."""
