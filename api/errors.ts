/** Domain errors; the one error handler maps them to status codes and `{ message }` bodies. */
export class AppError extends Error {
  constructor(
    readonly statusCode: number,
    message: string,
    /** When the refusal passes by itself: the error handler sends it as Retry-After. */
    readonly retryAfterSeconds?: number,
  ) {
    super(message);
    this.name = new.target.name;
  }
}

export class ValidationError extends AppError {
  constructor(message: string) {
    super(400, message);
  }
}

export class UnauthorizedError extends AppError {
  constructor(message = 'Authentication required') {
    super(401, message);
  }
}

export class PaymentRequiredError extends AppError {
  constructor(message: string) {
    super(402, message);
  }
}

/** Allowed in general but not now: a quota is full (docs/api.md § Quotas and charges). */
export class ForbiddenError extends AppError {
  constructor(message: string) {
    super(403, message);
  }
}

export class NotFoundError extends AppError {
  constructor(resource: string) {
    super(404, `${resource} not found`);
  }
}

/**
 * The resource's state refuses the request. `retryAfterSeconds` when that state passes by itself (a recovery
 * still running): the error handler sends it as Retry-After, and the answer is not kept for an
 * Idempotency-Key (api/plugins/idempotency.ts), so asking again with the same key is asking again.
 */
export class ConflictError extends AppError {
  constructor(message: string, retryAfterSeconds?: number) {
    super(409, message, retryAfterSeconds);
  }
}

export class UnprocessableError extends AppError {
  constructor(message: string) {
    super(422, message);
  }
}

/** A rate limit is exhausted; the error handler sends `Retry-After`. */
export class TooManyRequestsError extends AppError {
  constructor(message: string, retryAfterSeconds: number) {
    super(429, message, retryAfterSeconds);
  }
}

/** This process cannot take more of something now (a ceiling that keeps its memory bounded); another may. */
export class ServiceUnavailableError extends AppError {
  constructor(message: string, retryAfterSeconds: number) {
    super(503, message, retryAfterSeconds);
  }
}

/** A server the request depends on (an MCP server of a tool) could not be reached or answered wrongly; the message says which. */
export class BadGatewayError extends AppError {
  constructor(message: string) {
    super(502, message);
  }
}
