// Minimal Flit bot: answers every "M" line with the move "0 0 0 0".
using System;

class Hello
{
    static void Main()
    {
        Console.Error.WriteLine("hello from csharp");
        string line;
        while ((line = Console.ReadLine()) != null) // ReadLine drops "\n" and "\r\n"
        {
            if (line == "M")
            {
                Console.WriteLine("0 0 0 0");
                Console.Out.Flush();
            }
        }
    }
}
