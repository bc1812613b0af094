/** Child process of `npm run bench` (its traced-bare scenario): bench/serve-bare.ts with the same tracing as the API. */
import './kit/tracing-on';
import './serve-bare';
