import '@mantine/core/styles.css';
import '@mantine/notifications/styles.css';
import { Anchor, FileInput, Modal, Notification, createTheme, defaultVariantColorsResolver, MantineProvider, parseThemeColor, type CSSVariablesResolver } from '@mantine/core';
import { Notifications } from '@mantine/notifications';
import { focusManager, QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { setNonce } from 'get-nonce';
import { RouterProvider } from 'react-router';
import { ApiError } from './api/errors';
import { router } from './router';
import { restoreSession, whenSignedOut } from './session/session';

const queryClient = new QueryClient({
  defaultOptions: {
    queries: {
      // A refusal will not change by asking again; a network error or a 5xx may.
      retry: (count, error) => count < 2 && !(error instanceof ApiError && error.status < 500),
      staleTime: 5_000,
      refetchOnWindowFocus: true,
    },
  },
});
/**
 * Lists refresh when the console is looked at again (stale data older than staleTime): on the tab shown
 * again, and — what TanStack Query leaves out — on the window focused again, as when a person changed
 * something in another window (a terminal with curl, another browser) and comes back beside it.
 */
focusManager.setEventListener((onFocus) => {
  // Called without a value, it asks the document whether it is visible and refreshes what is stale if so.
  const listener = () => onFocus();
  document.addEventListener('visibilitychange', listener);
  window.addEventListener('focus', listener);
  return () => {
    document.removeEventListener('visibilitychange', listener);
    window.removeEventListener('focus', listener);
  };
});
// Nothing fetched for one session is shown to the next.
whenSignedOut(() => queryClient.clear());

/**
 * Mantine's defaults, darkened where axe measures less than WCAG AA contrast (4.5:1): the primary shade,
 * dimmed text, and links inside text underlined.
 */
const theme = createTheme({
  primaryColor: 'blue',
  primaryShade: { light: 8, dark: 5 },
  // Transitions off for people who ask their system for less motion.
  respectReducedMotion: true,
  defaultRadius: 'md',
  fontFamily: 'system-ui, -apple-system, "Segoe UI", Roboto, sans-serif',
  components: {
    Anchor: Anchor.extend({ defaultProps: { underline: 'always' } }),
    // Every dialog's close button has a name (axe: button-name).
    Modal: Modal.extend({ defaultProps: { closeButtonProps: { 'aria-label': 'Close' } } }),
    Notification: Notification.extend({ defaultProps: { closeButtonProps: { 'aria-label': 'Dismiss' } } }),
    FileInput: FileInput.extend({ defaultProps: { clearButtonProps: { 'aria-label': 'Clear the file' } } }),
  },
  // Light buttons and badges, and subtle buttons (whose hover is the light background): their text at the
  // darkest shade, a quarter darker again.
  variantColorResolver: (input) => {
    const colors = defaultVariantColorsResolver(input);
    if (input.variant !== 'light' && input.variant !== 'subtle') return colors;
    const parsed = parseThemeColor({ color: input.color ?? input.theme.primaryColor, theme: input.theme });
    return parsed.isThemeColor ? { ...colors, color: `color-mix(in srgb, var(--mantine-color-${parsed.color}-9), black 25%)` } : colors;
  },
});
const cssVariablesResolver: CSSVariablesResolver = () => ({
  variables: {},
  light: {
    '--mantine-color-dimmed': 'var(--mantine-color-gray-7)',
    // A field's error text and border (red 6 on white measures 3.3:1).
    '--mantine-color-error': 'var(--mantine-color-red-9)',
    '--mantine-primary-color-light-color': 'color-mix(in srgb, var(--mantine-color-blue-9), black 25%)',
  },
  dark: { '--mantine-color-dimmed': 'var(--mantine-color-dark-1)' },
});

/**
 * The page's CSP nonce (api/plugins/console.ts): Mantine's <style> elements carry it, and so do those of
 * react-remove-scroll (its modals' scroll lock), which takes it from get-nonce.
 */
const nonce = document.querySelector<HTMLMetaElement>('meta[property="csp-nonce"]')?.nonce ?? '';
setNonce(nonce);

void restoreSession();

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <MantineProvider theme={theme} defaultColorScheme="auto" cssVariablesResolver={cssVariablesResolver} getStyleNonce={() => nonce}>
      <Notifications position="top-right" />
      <QueryClientProvider client={queryClient}>
        <RouterProvider router={router} />
      </QueryClientProvider>
    </MantineProvider>
  </StrictMode>,
);
