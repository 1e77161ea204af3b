module keel.local/render-template

go 1.22
