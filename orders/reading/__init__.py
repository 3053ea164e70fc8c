"""Reads of orders, which never write: one order or a search for its seller (`selectors`),
the order view and OrderList summaries (`presenters`), and what other parts read of
orders: the network's leg pages (`leg_bookings`), support staff's words
(`support_text`), the booking page's webhook deliveries (`deliveries`) and the
Prometheus metrics (`metrics`). It imports only the models."""
