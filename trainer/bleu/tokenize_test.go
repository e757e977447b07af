package bleu

import "testing"

// The expected tokenizations follow from sacreBLEU 2.6.0's tokenizer_13a.py
// and tokenizer_re.py applied with Python's re module.
func TestTokenize13a(t *testing.T) {
	tests := []struct {
		in, want string
	}{
		{"Hello, world!", "Hello , world !"},
		{"It costs $1,000.50 (approx.)", "It costs $ 1,000.50 ( approx . )"},
		{"3.14 and 1,5 vs. end.", "3.14 and 1,5 vs . end ."},
		{"pages 10-20, well-known, a 5-year-old", "pages 10 - 20 , well-known , a 5 - year-old"},
		{"&quot;Quoted&quot; &amp; &lt;tag&gt;", "\" Quoted \" & < tag >"},
		{"&amp;quot;", "& quot ;"},
		{"&gt;&lt;", "> <"},
		{"He said \"hi\" -- 'really'?", "He said \" hi \" -- 'really' ?"},
		{"line one-\nline two\nthree", "line oneline two three"},
		{"<skipped> text", "text"},
		{"a.b,c", "a . b , c"},
		{"1.5.2", "1.5.2"},
		{"U.S.A.", "U . S . A ."},
		{"e-mail@example.com/path?x=1&y=2", "e-mail @ example . com / path ? x = 1 & y = 2"},
		{"naïve café — “quotes” …", "naïve café — “quotes” …"},
		{"100% of 3/4", "100 % of 3 / 4"},
		{".5 and ,5", ". 5 and , 5"},
		{"a\u00a0b\tc  d\u2003e\x1cf", "a b c d e f"},
		{"x--y", "x--y"},
		{"9- and -9 and 9-9", "9 - and -9 and 9 - 9"},
		{"{[(<>)]}", "{ [ ( < > ) ] }"},
		{"~^_|`", "~ ^ _ | `"},
		{"wait... what?!", "wait . . . what ? !"},
		{"1, 2, 3.", "1 , 2 , 3 ."},
		{"a.,b", "a . , b"},
		{"", ""},
		{"   ", ""},
		{"The dog's owner said: \"It's fine\" -- really!", "The dog's owner said : \" It's fine \" -- really !"},
		{"It's 3:45pm; 2+2=4*1", "It's 3 : 45pm ; 2 + 2 = 4 * 1"},
		{"#hashtag @user", "# hashtag @ user"},
		{"12.5%-15.5%", "12.5 % -15.5 %"},
		{"Mr. Smith (age 45).", "Mr . Smith ( age 45 ) ."},
	}
	for _, tt := range tests {
		if got := tokenize13a(tt.in); got != tt.want {
			t.Errorf("tokenize13a(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestTokens(t *testing.T) {
	tests := []struct {
		name string
		opt  Options
		in   string
		want []string
	}{
		{"13a", Options{Tokenize: Tokenize13a}, "Hello, World! \r\n", []string{"Hello", ",", "World", "!"}},
		{"none", Options{Tokenize: TokenizeNone}, " Hello, World!\u00a0 ", []string{"Hello,", "World!"}},
		{"lowercase", Options{Tokenize: Tokenize13a, Lowercase: true}, "ΟΔΟΣ İstanbul", []string{"οδος", "i\u0307stanbul"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.opt.tokens(tt.in)
			if len(got) != len(tt.want) {
				t.Fatalf("tokens(%q) = %q, want %q", tt.in, got, tt.want)
			}
			for i := range got {
				if got[i] != tt.want[i] {
					t.Fatalf("tokens(%q) = %q, want %q", tt.in, got, tt.want)
				}
			}
		})
	}
}
