import { Outlet, Navigate, useLocation } from 'react-router';
import { Loading } from '../components/states';
import { useSession } from '../session/session';

/** Screens behind sign-in: while the cookie is tried, a spinner; without a session, the sign-in page (and back here after). */
export function RequireSession() {
  const session = useSession();
  const location = useLocation();
  if (session.status === 'loading') return <Loading label="Signing in" />;
  if (session.status === 'signedOut') return <Navigate to="/signin" replace state={{ from: location.pathname + location.search, message: session.message }} />;
  return <Outlet />;
}
