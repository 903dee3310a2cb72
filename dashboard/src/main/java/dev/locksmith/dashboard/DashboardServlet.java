package dev.locksmith.dashboard;

import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

/**
 * The dashboard as a Jakarta Servlet (Servlet 5.0 or later), to mount in a host application's
 * container, for example under {@code /locksmith/*}. Authentication and authorization are the
 * host's: its filters (Spring Security, a container realm) run before the servlet, and the
 * authenticated principal is shown in the page header and logged with each action. The
 * dashboard's own cross-site request check still guards every action.
 *
 * <p>Map it to a path pattern ending in {@code /*}. Needs {@code jakarta.servlet-api} at run
 * time, which the container provides; the rest of the module does not.
 */
public final class DashboardServlet extends HttpServlet {

    private static final long serialVersionUID = 1L;

    private final transient DashboardApp app;

    /**
     * A servlet showing {@code config}'s dashboard.
     *
     * @param config what the dashboard reads and allows
     */
    public DashboardServlet(DashboardConfig config) {
        this.app = new DashboardApp(Objects.requireNonNull(config, "config"));
    }

    @Override
    protected void service(HttpServletRequest req, HttpServletResponse resp) throws IOException {
        String base = req.getContextPath() + req.getServletPath();
        String path = req.getPathInfo();
        if (path == null || path.isEmpty()) {
            resp.setStatus(303);
            resp.setHeader("Location", base + "/");
            return;
        }
        // The container's parameters, not the body: a filter before the servlet (Spring Security's
        // CSRF filter) may have read the form already.
        Map<String, String> form = new LinkedHashMap<>();
        if (req.getMethod().equals("POST") && Request.isForm(req.getContentType())) {
            if (req.getContentLengthLong() > Request.MAX_FORM_BYTES) {
                resp.setStatus(413);
                return;
            }
            req.getParameterMap().forEach((name, values) -> {
                if (values.length > 0) {
                    form.put(name, values[0]);
                }
            });
        }
        Request request = new Request(
                req.getMethod(),
                path,
                base,
                Params.parse(req.getQueryString()),
                Params.of(form),
                req::getHeader,
                req.getUserPrincipal() == null ? null : req.getUserPrincipal().getName());
        Response response = app.handle(request);
        resp.setStatus(response.status());
        resp.setContentType(response.contentType());
        response.headers().forEach(resp::setHeader);
        if (!req.getMethod().equals("HEAD") && response.body().length > 0) {
            resp.setContentLength(response.body().length);
            resp.getOutputStream().write(response.body());
        }
    }
}
