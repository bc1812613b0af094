/** Child process of `npm run bench` (its tracing scenarios): bench/serve-api.ts with tracing on. */
import './kit/tracing-on';
import './serve-api';
