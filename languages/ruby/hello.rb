# Minimal Flit bot: answers every "M" line with the move "0 0 0 0".
$stdout.sync = true
$stderr.puts "hello from ruby"
$stdin.each_line do |line|
  puts "0 0 0 0" if line.chomp == "M"
end
