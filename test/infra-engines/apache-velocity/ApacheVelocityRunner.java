// A second engine for the stack's mapping templates: Apache Velocity (Debian's `velocity`, 1.7),
// the engine API Gateway runs, with `$input`, `$context` and `$util` as API Gateway documents them
// for the features our templates use
// (https://docs.aws.amazon.com/apigateway/latest/developerguide/api-gateway-mapping-template-reference.html,
// https://docs.aws.amazon.com/apigateway/latest/developerguide/apigateway-override-request-response-parameters.html).
// Test support only (test/infra-engines/apache-velocity.ts starts it): one line in, one line out, per
// template run, so one JVM serves a whole test file. Every field is base64 (UTF-8), `-` when absent.
//   in:  id template method errorMessage headerCount (name value)*
//   out: id OK status|- body headerCount (name value)*   or   id ERROR message
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import org.apache.velocity.VelocityContext;
import org.apache.velocity.app.VelocityEngine;
import org.apache.velocity.runtime.RuntimeConstants;

public class ApacheVelocityRunner {
  /** `$context.responseOverride` and its `header`: a parameter may be overridden once (a second time is a 5XX). */
  public static class OverrideOnce extends HashMap<String, Object> {
    private final String what;

    OverrideOnce(String what) {
      this.what = what;
    }

    @Override
    public Object put(String key, Object value) {
      if (containsKey(key)) throw new IllegalStateException("overridden twice: " + what + key);
      return super.put(key, value);
    }
  }

  /** `$input`: only the method request parameters (our templates read no body). */
  public static class Input {
    private final Map<String, Map<String, String>> params = new HashMap<>();

    Input(Map<String, String> headers) {
      params.put("path", new LinkedHashMap<>());
      params.put("querystring", new LinkedHashMap<>());
      params.put("header", headers);
    }

    public Map<String, Map<String, String>> params() {
      return params;
    }

    /** A parameter by name, from the path, the query string or the headers, searched in that order. */
    public String params(String name) {
      for (String where : new String[] {"path", "querystring", "header"}) {
        String value = params.get(where).get(name);
        if (value != null) return value;
      }
      return null;
    }
  }

  /** `$util`: the documented functions, with Java's own implementations where API Gateway names them. */
  public static class Util {
    public String base64Decode(String text) {
      return new String(Base64.getDecoder().decode(text), StandardCharsets.UTF_8);
    }

    public String base64Encode(String text) {
      return Base64.getEncoder().encodeToString(text.getBytes(StandardCharsets.UTF_8));
    }

    public String escapeJavaScript(String text) {
      return org.apache.commons.lang.StringEscapeUtils.escapeJavaScript(text);
    }
  }

  private static String decode(String field) {
    return field.equals("-") ? null : new String(Base64.getDecoder().decode(field), StandardCharsets.UTF_8);
  }

  private static String encode(Object value) {
    return Base64.getEncoder().encodeToString(String.valueOf(value).getBytes(StandardCharsets.UTF_8));
  }

  public static void main(String[] args) throws Exception {
    VelocityEngine engine = new VelocityEngine();
    engine.setProperty(RuntimeConstants.RUNTIME_LOG_LOGSYSTEM_CLASS, "org.apache.velocity.runtime.log.NullLogChute");
    engine.init();
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    PrintStream out = new PrintStream(System.out, true, "UTF-8");
    String line;
    while ((line = in.readLine()) != null) {
      String[] fields = line.split(" ", -1);
      String id = fields[0];
      try {
        String template = decode(fields[1]);
        Map<String, String> headers = new LinkedHashMap<>();
        int count = Integer.parseInt(fields[4]);
        for (int i = 0; i < count; i++) headers.put(decode(fields[5 + 2 * i]), decode(fields[6 + 2 * i]));
        OverrideOnce header = new OverrideOnce("header ");
        OverrideOnce responseOverride = new OverrideOnce("");
        responseOverride.put("header", header);
        Map<String, Object> error = new HashMap<>();
        String message = decode(fields[3]);
        error.put("messageString", message == null ? "\"\"" : message);
        Map<String, Object> context = new HashMap<>();
        context.put("httpMethod", decode(fields[2]));
        context.put("responseOverride", responseOverride);
        context.put("error", error);
        VelocityContext velocity = new VelocityContext();
        velocity.put("input", new Input(headers));
        velocity.put("context", context);
        velocity.put("util", new Util());
        StringWriter body = new StringWriter();
        engine.evaluate(velocity, body, "template", template);
        StringBuilder answer = new StringBuilder(id).append(" OK ");
        Object status = responseOverride.get("status");
        answer.append(status == null ? "-" : encode(status)).append(' ').append(encode(body));
        answer.append(' ').append(header.size());
        for (Map.Entry<String, Object> entry : header.entrySet()) answer.append(' ').append(encode(entry.getKey())).append(' ').append(encode(entry.getValue()));
        out.println(answer);
      } catch (Exception failure) {
        Throwable cause = failure;
        while (cause.getCause() != null) cause = cause.getCause();
        out.println(id + " ERROR " + encode(cause.getClass().getSimpleName() + ": " + cause.getMessage()));
      }
    }
  }
}
