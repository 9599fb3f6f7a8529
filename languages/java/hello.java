// Minimal Flit bot: answers every "M" line with the move "0 0 0 0".
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;

public class hello {
    public static void main(String[] args) throws IOException {
        System.err.println("hello from java");
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
        String line;
        while ((line = in.readLine()) != null) { // readLine drops "\n" and "\r\n"
            if (line.equals("M")) {
                System.out.println("0 0 0 0");
                System.out.flush();
            }
        }
    }
}
