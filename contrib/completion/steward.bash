# bash completion for steward. Commands and options come from this file; service ids come from
# the running host of the app directory given (or the current directory), through
# `steward status --json`, so they are the ids that host really runs.

_steward_service_ids()
{
    local dir=${1:-.}
    steward status --json "$dir" 2>/dev/null | grep -o '"id": *"[^"]*"' | cut -d'"' -f4
}

_steward()
{
    local cur prev cmd dir word i
    COMPREPLY=()
    cur=${COMP_WORDS[COMP_CWORD]}
    prev=${COMP_WORDS[COMP_CWORD-1]}
    cmd=${COMP_WORDS[1]}
    local commands="run check graph status top start stop restart reload logs init schema help version"

    if [ "$COMP_CWORD" -eq 1 ]; then
        COMPREPLY=($(compgen -W "$commands --help --version" -- "$cur"))
        return
    fi
    case $prev in
        --log-format) COMPREPLY=($(compgen -W "text json" -- "$cur")); return ;;
        --log-level) COMPREPLY=($(compgen -W "debug info warn error" -- "$cur")); return ;;
        --format) COMPREPLY=($(compgen -W "text dot mermaid" -- "$cur")); return ;;
        --config|--control) COMPREPLY=($(compgen -f -- "$cur")); return ;;
        -n|--since) return ;;
    esac
    # the app directory, when one is on the line already
    for ((i = 2; i < COMP_CWORD; i++)); do
        word=${COMP_WORDS[i]}
        [ -d "$word" ] && dir=$word
    done
    case $cmd in
        run)
            if [ "$prev" = "-x" ]; then return; fi
            COMPREPLY=($(compgen -W "-x --config --log-format --log-level --watch" -- "$cur")
                       $(compgen -d -- "$cur")) ;;
        check) COMPREPLY=($(compgen -W "--config --json" -- "$cur") $(compgen -d -- "$cur")) ;;
        graph) COMPREPLY=($(compgen -W "--format --why" -- "$cur") $(compgen -d -- "$cur")) ;;
        status|start|stop|restart)
            local opts="--control"
            [ "$cmd" = status ] && opts="--json --control"
            COMPREPLY=($(compgen -W "$opts $(_steward_service_ids "$dir")" -- "$cur")
                       $(compgen -d -- "$cur")) ;;
        logs)
            COMPREPLY=($(compgen -W "-n -f --since --json --control $(_steward_service_ids "$dir")" -- "$cur")
                       $(compgen -d -- "$cur")) ;;
        top) COMPREPLY=($(compgen -W "--control" -- "$cur") $(compgen -d -- "$cur")) ;;
        reload) COMPREPLY=($(compgen -W "--all --control" -- "$cur") $(compgen -d -- "$cur")) ;;
        init) COMPREPLY=($(compgen -d -- "$cur")) ;;
        help) COMPREPLY=($(compgen -W "$commands" -- "$cur")) ;;
    esac
}
complete -F _steward steward
