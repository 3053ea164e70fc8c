"""What a request to the order endpoints says, and the rules it must pass before anything
is written: the request shapes (`serializers`, shape only), the typed input every
channel hands to the services (`inputs`; NDC builds the same) and the checks of a
booking request and of an order search (`checks`)."""
