// Reads "P <hex>" (a pattern) and "S <hex>" (a sample) lines, UTF-8 in hex; prints one line per
// pattern: for each sample, 1 if java.util.regex finds the pattern in it (search, as JSON Schema
// means), 0 if not, or "E <message>" when the pattern does not compile.
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.regex.Pattern;

public class PatternMatrix {
  public static void main(String[] args) throws Exception {
    List<String> patterns = new ArrayList<>();
    List<String> samples = new ArrayList<>();
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    for (String line; (line = in.readLine()) != null; ) {
      if (line.length() < 2) continue;
      String text = new String(HexFormat.of().parseHex(line.substring(2)), StandardCharsets.UTF_8);
      (line.charAt(0) == 'P' ? patterns : samples).add(text);
    }
    StringBuilder out = new StringBuilder();
    for (String source : patterns) {
      try {
        Pattern pattern = Pattern.compile(source);
        for (String sample : samples) out.append(pattern.matcher(sample).find() ? '1' : '0');
      } catch (Exception error) {
        out.append("E ").append(error.getMessage().replace('\n', ' '));
      }
      out.append('\n');
    }
    System.out.print(out);
  }
}
