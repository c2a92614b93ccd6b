import { dismissAlert, useAlerts } from '../alerts';
import { loginHref } from '../session';

/** The one place failures are shown; the region stays in the page so screen readers announce additions. */
export function AlertRegion() {
  const alerts = useAlerts();
  return (
    <div class="alerts" role="alert" aria-live="assertive">
      {alerts.map((alert) => (
        <div class="alert" key={alert.id} data-testid="error-alert">
          <span class="alert-message">{alert.message}</span>
          {alert.signIn && <a href={loginHref()} data-testid="sign-in-link">Sign in</a>}
          <button type="button" class="link-button" aria-label="Dismiss this message" onClick={() => dismissAlert(alert.id)}>
            Dismiss
          </button>
        </div>
      ))}
    </div>
  );
}
