-- A delivery's slot at its webhook (DELIVERY_CONCURRENCY_PER_WEBHOOK) is taken and given back in one
-- statement each, not a transaction of five or four statements: the webhook's advisory lock is held for
-- the work inside Postgres, never across round trips to the client, and the slot rows are leases, kept
-- without WAL (docs/adr/0012-fewer-round-trips-per-hook.md).
--
-- Each statement of a VOLATILE plpgsql function takes a fresh snapshot (READ COMMITTED), so what follows
-- the advisory lock sees what the lock's previous holder committed, as the separate statements did.

-- A slot row lives for one attempt (a lease) or a wait in line, and every delivery asks again for its own
-- (an attempt re-asks; a waiter re-asks at least every SLOT_WAIT_MS): after a crash of Postgres, an empty
-- table is a line that re-forms itself. No WAL for it, so taking and giving back a slot never waits for a
-- disk flush at its commit.
ALTER TABLE delivery_slots SET UNLOGGED;

-- Takes a slot for (delivery, generation) at its webhook: granted when fewer than `lim` attempts are in
-- flight besides those of the deliveries waiting ahead of it in line; otherwise it (stays) in line. A
-- delivery already holding its slot keeps it. `lease_ms`: how long a slot is held at most; `wait_ms`: how
-- long a place in line is kept without the delivery asking again.
CREATE FUNCTION delivery_slot_acquire(webhook uuid, delivery uuid, gen integer, lim integer, lease_ms double precision, wait_ms double precision)
RETURNS boolean LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  held boolean;
  ahead integer;
BEGIN
  PERFORM pg_advisory_xact_lock(hashtext('delivery-slots'), hashtext(webhook::text));
  DELETE FROM delivery_slots WHERE webhook_id = webhook AND expires_at <= now();
  INSERT INTO delivery_slots AS s (webhook_id, delivery_id, generation, holding, expires_at)
  VALUES (webhook, delivery, gen, false, now() + wait_ms * interval '1 millisecond')
  ON CONFLICT (delivery_id, generation) DO UPDATE SET expires_at = greatest(s.expires_at, EXCLUDED.expires_at)
  RETURNING s.holding INTO held;
  IF held THEN
    RETURN true;
  END IF;
  SELECT count(*) INTO ahead FROM delivery_slots o, delivery_slots me
  WHERE me.delivery_id = delivery AND me.generation = gen AND o.webhook_id = webhook
    AND (o.holding OR (o.since, o.delivery_id, o.generation) < (me.since, me.delivery_id, me.generation));
  IF ahead >= lim THEN
    RETURN false;
  END IF;
  UPDATE delivery_slots SET holding = true, expires_at = now() + lease_ms * interval '1 millisecond'
  WHERE delivery_id = delivery AND generation = gen;
  RETURN true;
END
$$;

-- Gives the slot (or place in line) of (delivery, generation) back; answers the deliveries now at the
-- front of the line that may take the free slots, oldest first.
CREATE FUNCTION delivery_slot_release(webhook uuid, delivery uuid, gen integer, lim integer)
RETURNS TABLE (next_delivery_id uuid, next_generation integer) LANGUAGE plpgsql VOLATILE AS $$
BEGIN
  PERFORM pg_advisory_xact_lock(hashtext('delivery-slots'), hashtext(webhook::text));
  DELETE FROM delivery_slots WHERE delivery_id = delivery AND generation = gen;
  RETURN QUERY
    SELECT s.delivery_id, s.generation FROM delivery_slots s
    WHERE s.webhook_id = webhook AND NOT s.holding AND s.expires_at > now()
    ORDER BY s.since, s.delivery_id, s.generation
    LIMIT greatest(0, lim - (SELECT count(*) FROM delivery_slots h WHERE h.webhook_id = webhook AND h.holding AND h.expires_at > now()));
END
$$;
