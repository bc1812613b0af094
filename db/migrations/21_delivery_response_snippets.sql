-- What the receiver answered, per delivery attempt: the first 1 KiB at most of the response body as text
-- (null when there was no response, an empty body, or a body that is not text). Shown with the attempt
-- (GET /api/webhooks/:id/deliveries/:deliveryId) to those who may read the webhook.
ALTER TABLE delivery_attempts ADD COLUMN response_snippet text CHECK (octet_length(response_snippet) <= 1024);
